package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/train"
)

// tinySweep runs a SENT sweep of IID+T seen runs on package train's
// fixtures (word vectors, one epoch) with methods and grid (YAML lists and
// maps), which must list n runs; it returns the runs, the store and the
// train spec each run was trained with, by run ID.
func tinySweep(t *testing.T, methods, grid string, n int) ([]Run, *Store, map[string]train.RunSpec) {
	t.Helper()
	tiny, data := trainFixtures(t, map[string]string{"tiny_train.tsv": "train.tsv", "tiny_dev.tsv": "dev.tsv"})
	spec, err := ParseSpec([]byte(`
tasks: [{name: SENT, data: ` + data + `, suite: ` + filepath.Join(tiny, "tiny_suite.jsonl") + `}]
model: {name: wordvec, options: {glove: ` + filepath.Join(tiny, "tiny_glove.txt") + `, hidden: 8, max_length: 16}}
configurations: [IID+T]
methods: ` + methods + `
scores: [seen]
grid: ` + grid + `
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&TrainRunner{}).Check(spec); err != nil {
		t.Fatal(err)
	}
	spec.Out = t.TempDir()
	runs, err := Expand(context.Background(), spec, &Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		for _, r := range runs {
			t.Log(r.ID(), r.Label())
		}
		t.Fatalf("%d runs, want %d", len(runs), n)
	}
	store := &Store{Dir: spec.OutDir()}
	sum, err := Execute(context.Background(), store, runs, &TrainRunner{Store: store}, Options{Jobs: 1, Logger: discardLogger()})
	if err != nil || sum.Err() != nil || sum.Ran != n {
		t.Fatalf("sweep: %+v, %v, %v", sum, err, sum.Err())
	}
	specs := map[string]train.RunSpec{}
	for _, r := range runs {
		b, err := os.ReadFile(filepath.Join(store.RunDir(r.ID()), TrainSpecFile))
		if err != nil {
			t.Fatal(err)
		}
		var s train.RunSpec
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		specs[r.ID()] = s
	}
	return runs, store, specs
}

// TestSweepIRMLambda: a method setting is a grid key like any other. Two
// values of IRM's λ give two IRM runs with their own IDs, each trained with
// its λ; the other methods' runs do not read λ and are listed once.
func TestSweepIRMLambda(t *testing.T) {
	// The IID baseline and vanilla once, IRM once per λ.
	runs, _, specs := tinySweep(t, "[vanilla, irm]", "{irm_lambda: [10, 100], iid_epochs: [1], epochs: [1], batch_size: [4]}", 4)
	lambdas := map[float64]string{}
	for _, r := range runs {
		s := specs[r.ID()]
		if r.Method != "irm" {
			if s.Settings != (train.MethodSettings{}) || r.Axes() != "" {
				t.Errorf("%s trained with settings %+v, axes %q", r.Label(), s.Settings, r.Axes())
			}
			continue
		}
		if want := r.Train.Settings.IRMLambda; s.Settings.IRMLambda != want || !strings.Contains(r.Axes(), fmt.Sprintf("irm_lambda=%v", want)) {
			t.Errorf("%s (axes %q) trained with λ = %v, want %v", r.Label(), r.Axes(), s.Settings.IRMLambda, want)
		}
		lambdas[s.Settings.IRMLambda] = r.ID()
	}
	if len(lambdas) != 2 || lambdas[10] == lambdas[100] {
		t.Errorf("IRM runs by λ: %v, want two runs with their own IDs", lambdas)
	}
}

// TestMethodSettingKeysAreChecked: a method setting's values are checked
// like any grid key's.
func TestMethodSettingKeysAreChecked(t *testing.T) {
	for _, tc := range []struct{ grid, want string }{
		{"{irm_lambda: [-1]}", "line 6: field grid.irm_lambda[0]: method_settings.irm_lambda -1 must be positive (leave it out for the profile's)"},
		{"{method_settings.irm_lambda: [-1]}", "line 6: field grid.method_settings.irm_lambda[0]: method_settings.irm_lambda -1 must be positive (leave it out for the profile's)"},
		{"{irm_lambda: [0]}", "line 6: field grid.irm_lambda[0]: 0 is not a positive number (leave irm_lambda out for the profile's)"},
		{"{fish_meta_steps: [2.5]}", "line 6: field grid.fish_meta_steps[0]: 2.5 is not a whole number of at least 0"},
		{"{dro_eta: [x]}", `line 6: field grid.dro_eta[0]: "x" is not a number`},
		{"{train_size: [1.0]}", "line 6: field grid.train_size[0]: 1 is neither a whole number of examples nor a fraction in (0, 1)"},
		{"{train_size: [0]}", "line 6: field grid.train_size[0]: 0 is not a positive whole number"},
	} {
		spec, err := ParseSpec([]byte("tasks: [{name: SENT, data: sst2, suite: sentiment}]\nmodel: {name: bert-tiny}\nconfigurations: [IID+T]\nmethods: [irm]\nscores: [seen]\ngrid: " + tc.grid + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := (&TrainRunner{}).Check(spec); err == nil || err.Error() != tc.want {
			t.Errorf("grid %s: %v, want %q", tc.grid, err, tc.want)
		}
	}
}

// TestSweepTrainSize: train_size trains each run on a subsample of the
// i.i.d. training part (recorded in its train spec) and scores every run on
// the same, whole i.i.d. test set; each size is its own run and axis.
func TestSweepTrainSize(t *testing.T) {
	runs, store, specs := tinySweep(t, "[vanilla]", "{train_size: [2, 0.5], iid_epochs: [1], epochs: [1], batch_size: [4]}", 4)
	iidN := -1
	for _, r := range runs {
		dir := store.RunDir(r.ID())
		s := specs[r.ID()]
		want := train.RunSpec{TrainSize: 2}
		if r.TrainSize() == 0.5 {
			want = train.RunSpec{TrainFraction: 0.5}
		}
		if s.TrainSize != want.TrainSize || s.TrainFraction != want.TrainFraction {
			t.Errorf("%s: trained with size %d, fraction %v", r.Label(), s.TrainSize, s.TrainFraction)
		}
		if r.Axes() != "train_size="+fmt.Sprint(r.TrainSize()) {
			t.Errorf("%s: axes %q", r.Label(), r.Axes())
		}
		res, err := ReadResult(dir)
		if err != nil {
			t.Fatal(err)
		}
		if iidN >= 0 && len(res.IIDCorrect) != iidN {
			t.Errorf("%s scored %d i.i.d. test examples, another run %d", r.Label(), len(res.IIDCorrect), iidN)
		}
		iidN = len(res.IIDCorrect)
	}
	if iidN <= 0 {
		t.Errorf("no i.i.d. test examples scored")
	}
}

// TestSweepAnyRunSpecField: a grid key may name any setting of the run spec
// by its field path. Each value is its own run, axis and row; a method
// setting named by its path reaches only the runs of the methods that read
// it, as its short key does.
func TestSweepAnyRunSpecField(t *testing.T) {
	// Per max_length: the IID baseline, vanilla and IRM.
	runs, _, specs := tinySweep(t, "[vanilla, irm]", "{max_length: [8, 12], method_settings.irm_lambda: [10], hyper.loss.detach_inv: [true], iid_epochs: [1], epochs: [1], batch_size: [4]}", 6)
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID()] = true
		s := specs[r.ID()]
		if want := r.Train.MaxLength; s.MaxLength != want || (want != 8 && want != 12) {
			t.Errorf("%s trained at max_length %d, want %d, one of the grid's", r.Label(), s.MaxLength, want)
		}
		// The IID baseline reads no suite-phase loss option.
		if s.Hyper.Loss.DetachINV != (r.Configuration != ConfigIID) {
			t.Errorf("%s: hyper.loss.detach_inv %v", r.Label(), s.Hyper.Loss.DetachINV)
		}
		wantLambda := 0.0
		if r.Method == "irm" {
			wantLambda = 10
		}
		if s.Settings.IRMLambda != wantLambda {
			t.Errorf("%s trained with λ = %v, want %v", r.Label(), s.Settings.IRMLambda, wantLambda)
		}
		if !strings.Contains(r.Axes(), fmt.Sprintf("max_length=%d", s.MaxLength)) {
			t.Errorf("%s: axes %q do not name its max_length", r.Label(), r.Axes())
		}
	}
	if len(ids) != 6 {
		t.Errorf("%d distinct run IDs, want 6", len(ids))
	}
}

// TestFieldPathKeysAreChecked: a field path is refused, with the reason,
// when the run spec has no such field, when another spec field sets it, or
// when a value does not fit it.
func TestFieldPathKeysAreChecked(t *testing.T) {
	for _, tc := range []struct{ grid, want string }{
		{"{hyper.lrr: [1]}", "field grid.hyper.lrr: unknown key: the run spec has no field hyper.lrr"},
		{"{method: [irm]}", "field grid.method: unknown key: method is not a sweep axis (a spec field of its own sets it)"},
		{"{hyper: [1]}", "field grid.hyper: unknown key: hyper is not a number or a boolean"},
		{"{max_length: [1.5]}", "field grid.max_length[0]: 1.5 is not a whole number of at least 0"},
		{"{hyper.loss.detach_inv: [1]}", "field grid.hyper.loss.detach_inv[0]: 1 is not true or false"},
		{"{method_settings.dro_eta: [x]}", `field grid.method_settings.dro_eta[0]: "x" is not a number`},
	} {
		spec, err := ParseSpec([]byte("tasks: [{name: SENT, data: sst2, suite: sentiment}]\nmodel: {name: bert-tiny}\nconfigurations: [IID+T]\nmethods: [irm]\nscores: [seen]\ngrid: " + tc.grid + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = (&TrainRunner{}).Check(spec)
		if err == nil || !strings.HasPrefix(err.Error(), "line 6: "+tc.want) {
			t.Errorf("grid %s: %v, want %q", tc.grid, err, tc.want)
		}
	}
}

// Every short grid key names a field of the run spec, whose kind its
// values are checked against.
func TestGridKeysNameRunSpecFields(t *testing.T) {
	for key, path := range gridKeys {
		if err := fieldPathError(path); err != nil {
			t.Errorf("grid key %s: %s: %v", key, path, err)
		}
		if _, ok := gridKeyKind(key); !ok {
			t.Errorf("grid key %s has no kind", key)
		}
	}
}

// TestOneRuleForASettingWhateverItsKey: a setting's value is checked by
// package train's one rule, whichever key spells it: lr: [0] and
// hyper.lr: [0] are refused with one message (hyper.lr's zero used to
// become the profile's 2e-5), hyper.lr: [-1] is refused before anything
// runs, and every bad value of a spec is reported, each with its line —
// by the preflight's Check and by Expand, which checks every run.
func TestOneRuleForASettingWhateverItsKey(t *testing.T) {
	const head = "tasks: [{name: SENT, folds: {type: [MFT]}}]\nmodel: {name: bert-tiny}\nconfigurations: [IID+T]\nmethods: [vanilla]\nscores: [type]\n"
	message := func(grid string) (check, expand string) {
		spec, err := ParseSpec([]byte(head + "grid: " + grid + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := (&TrainRunner{}).Check(spec); err != nil {
			check = err.Error()
		}
		if _, err := Expand(context.Background(), spec, &Inputs{}); err != nil {
			expand = err.Error()
		}
		return check, expand
	}
	const want = "line 6: field grid.%s[0]: hyper: lr %s: want a positive number"
	for _, tc := range []struct{ key, value string }{{"lr", "0"}, {"hyper.lr", "0"}, {"hyper.lr", "-1"}, {"lr", "-1"}} {
		check, expand := message("{" + tc.key + ": [" + tc.value + "]}")
		w := fmt.Sprintf(want, tc.key, tc.value)
		if check != w || expand != w {
			t.Errorf("%s: [%s]: preflight %q, expansion %q; want %q from both", tc.key, tc.value, check, expand, w)
		}
	}
	check, expand := message("\n  hyper.lr: [-1, 0.001]\n  batch_size: [0]\n  max_length: [0]")
	for _, w := range []string{
		"line 7: field grid.hyper.lr[0]: hyper: lr -1: want a positive number",
		"line 8: field grid.batch_size[0]: hyper: batch_size 0: want a positive number",
		"line 9: field grid.max_length[0]: max_length 0 must be positive",
	} {
		if !strings.Contains(check, w) || !strings.Contains(expand, w) {
			t.Errorf("a spec of three bad values: preflight\n%s\nexpansion\n%s\nwant each to say %q", check, expand, w)
		}
	}
}
