package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestTreesShareNothing: two trees NewCmdBeluga builds share no command and
// no flag variable. A flag bound to a package-level variable (as the init()
// commands' were) is one variable for every tree: what one execution
// parses into it, another sees.
func TestTreesShareNothing(t *testing.T) {
	var walk func(path string, a, b *cobra.Command)
	walk = func(path string, a, b *cobra.Command) {
		if a == b {
			t.Errorf("%s: one *cobra.Command in both trees", path)
			return
		}
		for _, fs := range []func(*cobra.Command) *pflag.FlagSet{(*cobra.Command).LocalNonPersistentFlags, (*cobra.Command).PersistentFlags} {
			fs(a).VisitAll(func(fa *pflag.Flag) {
				fb := fs(b).Lookup(fa.Name)
				if fb == nil {
					t.Errorf("%s --%s: in one tree only", path, fa.Name)
					return
				}
				// A pflag value is a pointer to the variable it sets.
				va, vb := reflect.ValueOf(fa.Value), reflect.ValueOf(fb.Value)
				if va.Kind() == reflect.Pointer && va.Pointer() == vb.Pointer() {
					t.Errorf("%s --%s: both trees set one variable", path, fa.Name)
				}
			})
		}
		ca, cb := a.Commands(), b.Commands()
		if len(ca) != len(cb) {
			t.Fatalf("%s: %d and %d subcommands", path, len(ca), len(cb))
		}
		for i := range ca {
			walk(path+" "+ca[i].Name(), ca[i], cb[i])
		}
	}
	a, b := NewCmdBeluga(), NewCmdBeluga()
	if len(a.Commands()) == 0 {
		t.Fatal("no commands")
	}
	walk("beluga", a, b)
}

// TestExecutionsDoNotCarryFlags: two trees built before either executes;
// the flags the first execution sets (--format csv, --verbose) are not the
// second's, which writes the default Markdown table.
func TestExecutionsDoNotCarryFlags(t *testing.T) {
	spec, _, _ := syntheticSweep(t, t.TempDir(), "cli-fresh", "")
	first, second := NewCmdBeluga(), NewCmdBeluga()
	out, err := executeOn(t, first, "report", spec, "--trials", "10", "--format", "csv", "--verbose")
	if err != nil || strings.Contains(out, "| IID |") {
		t.Fatalf("report --format csv: %v\n%s", err, out)
	}
	out, err = executeOn(t, second, "report", spec, "--trials", "10")
	if err != nil || !strings.Contains(out, "| IID |") {
		t.Errorf("report after a report --format csv on another tree: %v\n%s", err, out)
	}
	if v, _ := second.PersistentFlags().GetBool("verbose"); v {
		t.Error("--verbose of the first execution is set in the second tree")
	}
}
