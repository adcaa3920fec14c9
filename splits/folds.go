package splits

import "github.com/beluga-nlp/beluga/suites"

// FoldKind names a held-out partition of the suite.
type FoldKind string

// The three held-out partitions of BeLUGA: one fold per functionality, per
// functionality class, and per test type.
const (
	ByFunctionality FoldKind = "func"
	ByClass         FoldKind = "class"
	ByType          FoldKind = "type"
)

// FoldKinds lists the partitions in BeLUGA's order.
var FoldKinds = []FoldKind{ByFunctionality, ByClass, ByType}

// Fold is one held-out training run: the functionalities whose training cases
// it removes from T_train, and the functionalities it scores on T_test.
type Fold struct {
	Kind FoldKind
	// Name is the held-out functionality, class or type.
	Name string
	// Removed lists the functionalities whose T_train cases are withheld.
	Removed []string
	// Scored lists the functionalities scored with the fold's model.
	Scored []string
}

// TypeOf chooses which test type places a functionality in a type fold.
type TypeOf int

const (
	// TrainedType holds a functionality out with the type it is trained as
	// and scores it there too. For QQP's synonyms test (a CheckList INV that
	// BeLUGA trains as MFT) it is withheld and scored in the MFT fold.
	TrainedType TypeOf = iota
	// BeLUGATypes reproduces BeLUGA: a type fold drops the training data of
	// that type (so QQP's synonyms test is withheld by the MFT fold, being
	// trained as MFT) but scores the functionalities whose CheckList type
	// it is (so the synonyms test is scored by the INV fold, whose model did
	// see it). This is the default because it defines the published numbers.
	BeLUGATypes
)

// FoldOptions configures Folds.
type FoldOptions struct {
	// Types selects the type-fold semantics; the zero value is TrainedType,
	// so callers reproducing BeLUGA set BeLUGATypes (DefaultFoldOptions does).
	Types TypeOf
}

// DefaultFoldOptions reproduces BeLUGA.
var DefaultFoldOptions = FoldOptions{Types: BeLUGATypes}

// Folds returns the folds of one partition in suite order (of first
// appearance of each functionality, class or type).
func Folds(s *suites.Suite, kind FoldKind, opt FoldOptions) []Fold {
	var order []string
	removed := map[string][]string{}
	scored := map[string][]string{}
	add := func(m map[string][]string, key, fn string) {
		if _, seen := removed[key]; !seen {
			if _, seen := scored[key]; !seen {
				order = append(order, key)
			}
		}
		m[key] = append(m[key], fn)
	}
	for _, f := range s.Functionalities {
		switch kind {
		case ByFunctionality:
			add(removed, f.Name, f.Name)
			add(scored, f.Name, f.Name)
		case ByClass:
			add(removed, f.Class, f.Name)
			add(scored, f.Class, f.Name)
		case ByType:
			trained := string(f.TrainType())
			add(removed, trained, f.Name)
			if opt.Types == BeLUGATypes {
				add(scored, string(f.Type), f.Name)
			} else {
				add(scored, trained, f.Name)
			}
		}
	}
	folds := make([]Fold, 0, len(order))
	for _, key := range order {
		folds = append(folds, Fold{Kind: kind, Name: key, Removed: removed[key], Scored: scored[key]})
	}
	return folds
}

// Remove reports whether the fold withholds f's training cases.
func (fd Fold) Remove(f *suites.Functionality) bool {
	for _, n := range fd.Removed {
		if n == f.Name {
			return true
		}
	}
	return false
}
