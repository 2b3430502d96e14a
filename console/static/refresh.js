// riverbpmn console: reloads the element marked data-refresh="SECONDS" in
// place, from the same URL, while the tab is visible and the box
// #auto-refresh is ticked. No framework; served from the console itself, so
// the console's CSP (script-src 'self') allows it.
(function () {
	"use strict";
	var el = document.querySelector("[data-refresh]");
	if (!el || !window.fetch || !window.DOMParser) {
		return;
	}
	var every = (parseInt(el.getAttribute("data-refresh"), 10) || 10) * 1000;
	var box = document.getElementById("auto-refresh");
	var status = document.getElementById("refresh-status");
	function say(text) {
		if (status) {
			status.textContent = text;
		}
	}
	function schedule() {
		window.setTimeout(tick, every);
	}
	function tick() {
		if (document.hidden || (box && !box.checked)) {
			schedule();
			return;
		}
		fetch(window.location.href, { credentials: "same-origin", headers: { "X-Console-Refresh": "1" } })
			.then(function (resp) {
				if (!resp.ok) {
					throw new Error("HTTP " + resp.status);
				}
				return resp.text();
			})
			.then(function (html) {
				var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-refresh]");
				if (fresh) {
					el.replaceWith(fresh);
					el = fresh;
				}
				say("refreshed at " + new Date().toLocaleTimeString());
			})
			.catch(function (err) {
				say("refresh failed (" + err.message + "): showing the last figures");
			})
			.then(schedule);
	}
	schedule();
})();
