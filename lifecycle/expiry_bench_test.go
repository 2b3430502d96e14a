package lifecycle_test

import (
	"testing"
	"time"

	"github.com/riverbpmn/riverbpmn/lifecycle"
)

// The work path's expiry guard on a job without an expiration time: one
// byte search in its metadata, no allocation, no query.
func BenchmarkExpiresAtWithout(b *testing.B) {
	metadata := []byte(`{"bpmn": {"process_definition_key": "order", "process_instance_id": "order-1", "activity_id": "charge", "job_definition_id": "charge-async", "priority": 5, "exclusive": true}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := lifecycle.ExpiresAt(metadata); ok {
			b.Fatal("no expiration time")
		}
	}
}

// The guard on a job with one (parsed from its metadata).
func BenchmarkExpiresAtWith(b *testing.B) {
	at := time.Now().Add(time.Hour)
	metadata, err := lifecycle.Opts{ExpiresAt: &at}.AddToMetadata([]byte(`{"bpmn": {"process_definition_key": "order"}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := lifecycle.ExpiresAt(metadata); !ok {
			b.Fatal("an expiration time")
		}
	}
}

func TestExpiresAt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 19, 0, 0, 123456789, time.UTC)
	metadata, err := lifecycle.Opts{ExpiresAt: &at}.AddToMetadata(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := lifecycle.ExpiresAt(metadata)
	if !ok || !got.Equal(at.Truncate(time.Microsecond)) {
		t.Fatalf("ExpiresAt = %s, %t", got, ok)
	}
	if _, ok := lifecycle.ExpiresAt([]byte(`{"note": "expires_at"}`)); ok {
		t.Fatal("a string mentioning expires_at is no expiration time")
	}
	if got := lifecycle.ExpiryMessage(at); got != "riverbpmn: job expired at 2026-11-22T19:00:00.123456Z before it started" {
		t.Fatal(got)
	}
}
