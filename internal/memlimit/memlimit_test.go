package memlimit_test

import (
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/hostiletest"
	"github.com/beluga-nlp/beluga/internal/memlimit"
)

// TestAddressSpaceLimit: under ulimit -v the limit is what is left of the
// address space, so that checks refuse what would crash the process.
func TestAddressSpaceLimit(t *testing.T) {
	hostiletest.Run(t, func(t *testing.T) {
		limit, source := memlimit.Limit()
		if !strings.Contains(source, "ulimit -v") || limit == 0 || limit >= hostiletest.AddressSpace {
			t.Fatalf("limit %d from %q, want under %d from ulimit -v", limit, source, hostiletest.AddressSpace)
		}
		err := memlimit.Check("a test's 4 GiB", 4<<30)
		if err == nil || !strings.Contains(err.Error(), "a test's 4 GiB would take about 4.0 GiB, more than the") {
			t.Fatalf("Check: %v", err)
		}
		if err := memlimit.Check("a test's 1 MiB", 1<<20); err != nil {
			t.Fatal(err)
		}
	})
}
