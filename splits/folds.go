package splits

import (
	"encoding/json"
	"strings"

	"github.com/beluga-nlp/beluga/suites"
)

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

// MetaPrefix starts the kind of a partition by a case-metadata column:
// "meta:target_ident" holds out, in turn, the cases of each value of the
// column target_ident (Checking HateCheck's IdentOut), across every
// functionality.
const MetaPrefix = "meta:"

// ByMeta is the partition by the case-metadata column col.
func ByMeta(col string) FoldKind { return FoldKind(MetaPrefix + col) }

// MetaColumn returns the metadata column a partition is keyed by, and
// false for BeLUGA's func, class and type partitions.
func (k FoldKind) MetaColumn() (string, bool) {
	col, ok := strings.CutPrefix(string(k), MetaPrefix)
	return col, ok && col != ""
}

// CaseMeta returns the value of a case's metadata column col: a string
// as it is, any other JSON value as its JSON text; false when the case's
// meta is not a JSON object or lacks col (or holds null or "" there).
func CaseMeta(c *suites.Case, col string) (string, bool) {
	if len(c.Meta) == 0 || c.Meta[0] != '{' {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Meta, &m) != nil {
		return "", false
	}
	raw, ok := m[col]
	if !ok || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	return s, s != ""
}

// Fold is one held-out training run: the functionalities whose training cases
// it removes from T_train, and the functionalities it scores on T_test.
// A fold of a metadata partition withholds and scores cases, not whole
// functionalities: those of Removed and Scored whose column has the value
// Name (HoldsOut).
type Fold struct {
	Kind FoldKind
	// Name is the held-out functionality, class, type or metadata value.
	Name string
	// Removed lists the functionalities whose T_train cases are withheld
	// (for a metadata fold: that have a case of the value).
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
	col, byMeta := kind.MetaColumn()
	for _, f := range s.Functionalities {
		if byMeta {
			for _, c := range f.Cases {
				if v, ok := CaseMeta(c, col); ok && !containsLast(removed[v], f.Name) {
					add(removed, v, f.Name)
					add(scored, v, f.Name)
				}
			}
			continue
		}
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

// containsLast reports whether the last of names is n (a functionality's
// cases are visited together, so that is the only place it can be).
func containsLast(names []string, n string) bool {
	return len(names) > 0 && names[len(names)-1] == n
}

// HoldsOut reports whether the fold withholds case c of f from training
// and scores it (on T_test): every case of a functionality the fold
// removes, and for a metadata fold only the cases whose column has the
// fold's value.
func (fd Fold) HoldsOut(f *suites.Functionality, c *suites.Case) bool {
	if !fd.Remove(f) {
		return false
	}
	col, ok := fd.Kind.MetaColumn()
	if !ok {
		return true
	}
	v, ok := CaseMeta(c, col)
	return ok && v == fd.Name
}

// ByMeta reports whether the fold is of a metadata partition, whose
// functionalities keep the cases of other values.
func (fd Fold) ByMeta() bool {
	_, ok := fd.Kind.MetaColumn()
	return ok
}

// Remove reports whether the fold withholds training cases of f: all of
// them, or for a metadata fold those HoldsOut names.
func (fd Fold) Remove(f *suites.Functionality) bool {
	for _, n := range fd.Removed {
		if n == f.Name {
			return true
		}
	}
	return false
}
