package console

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/riverbpmn/riverbpmn/deployment"
)

// ---- deployments ----

type deploymentsData struct {
	// Deployments are the page's deployments, each with its versions and
	// their job definitions.
	Deployments []*deployment.Deployment
	Pager       pager
	Total       *total
}

// deployments lists deployments, newest first, with their process
// definitions (versions) and job definitions.
func (h *Handler) deployments(w http.ResponseWriter, r *http.Request) {
	handle := h.engine.Deployments()
	page, err := handle.List(r.Context(), deployment.ListParams{After: r.URL.Query().Get("after"), Limit: h.pageSize})
	if err != nil {
		h.renderError(w, r, deploymentErrorStatus(err), err)
		return
	}
	data := &deploymentsData{}
	if data.Total, err = h.countDeployments(r.Context()); err != nil {
		h.renderError(w, r, deploymentErrorStatus(err), err)
		return
	}
	for _, d := range page.Deployments {
		full, err := handle.Get(r.Context(), d.ID)
		if err != nil {
			h.renderError(w, r, deploymentErrorStatus(err), err)
			return
		}
		data.Deployments = append(data.Deployments, full)
	}
	data.Pager = h.newPager(r, "after", page.Cursor != "", page.Cursor)
	h.render(w, r, http.StatusOK, "deployments", "Deployments", data)
}

// deploymentDelete is the confirmation page of a deletion: what it
// touches, before anything is done.
func (h *Handler) deploymentDelete(w http.ResponseWriter, r *http.Request) {
	dep, err := h.engine.Deployments().Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.renderError(w, r, deploymentErrorStatus(err), err)
		return
	}
	var unfinished int64
	for _, pd := range dep.ProcessDefinitions {
		for _, jd := range pd.JobDefinitions {
			unfinished += jd.UnfinishedJobs
		}
	}
	h.render(w, r, http.StatusOK, "deployment_delete", "Delete deployment "+dep.ID, &deploymentDeleteData{Deployment: dep, UnfinishedJobs: unfinished})
}

type deploymentDeleteData struct {
	Deployment     *deployment.Deployment
	UnfinishedJobs int64
}

// deleteDeployment deletes a deployment (POST of the confirmation page).
func (h *Handler) deleteDeployment(r *http.Request) (string, error) {
	id := r.PathValue("id")
	res, err := h.engine.Deployments().Delete(r.Context(), id, deployment.DeleteParams{Cascade: r.PostFormValue("cascade") == "1"})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleted deployment %s with %d process definitions; %d unfinished jobs deleted.", id, len(res.Deployment.ProcessDefinitions), res.DeletedJobs), nil
}

func deploymentErrorStatus(err error) int {
	if errors.Is(err, deployment.ErrNotFound) {
		return http.StatusNotFound
	}
	return errorStatus(err)
}
