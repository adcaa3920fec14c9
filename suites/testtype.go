package suites

import (
	"fmt"
	"image/color"
	"strings"
	"sync"
)

// TestType is a test type's registered name (CheckList's MFT, INV and DIR,
// or one a program adds with RegisterTestType).
type TestType string

// The three CheckList test types, registered below.
const (
	MFT TestType = "MFT" // minimum functionality test: labelled inputs
	INV TestType = "INV" // invariance: perturbations must not change the prediction
	DIR TestType = "DIR" // directional expectation: perturbations change it in a known way
)

// TypeSpec is everything the packages below the trainer know about a test
// type: its name, how its cases are shaped, the expectation its
// functionalities get when the suite does not state one, how a failing
// input is described, and how the heatmaps draw it. Packages above suites
// attach their own behaviour keyed by the same name (train.RegisterTestType:
// its batches and loss), so adding a type is one registration per layer and
// no switch anywhere names a type.
type TypeSpec struct {
	Name TestType
	// Legend is the heatmap legend's text for the type.
	Legend string
	// Paired: a case is an original followed by its perturbations (INV,
	// DIR), compared with each other; otherwise every input is scored on
	// its own against a label (MFT).
	Paired bool
	// Expect is the expectation a functionality of the type gets when its
	// suite names none. A zero Kind means the type has no default: each
	// functionality must state its own (DIR's direction).
	Expect Expectation
	// Directional says the type's functionalities take a direction (the
	// template format's direction:, a table's contrast links, the
	// trainer's direction rule).
	Directional bool
	// Colour draws the type's marks on the heatmaps.
	Colour color.RGBA
	// Violation says how far an input breaks the expectation
	// (metrics.InputVerdict.Violation) in the type's terms.
	Violation func(v float64) string
}

var (
	typeMu    sync.RWMutex
	typeSpecs = map[TestType]*TypeSpec{}
	typeOrder []TestType
)

func init() {
	for _, s := range []TypeSpec{
		{Name: MFT, Legend: "MFT", Expect: Expectation{Kind: ExpectEq, Agg: AggAll},
			Colour:    color.RGBA{0, 0, 0xff, 0xff},
			Violation: func(v float64) string { return fmt.Sprintf("1 − p(expected) = %.3f", v) }},
		{Name: INV, Legend: "INV", Paired: true,
			Expect: Expectation{Kind: ExpectInv, Tolerance: 0.1, Agg: AggAllExceptFirst},
			Colour: color.RGBA{0xff, 0, 0, 0xff},
			Violation: func(v float64) string {
				return fmt.Sprintf("probability of the original's class changed by %.3f", v)
			}},
		{Name: DIR, Legend: "DIR", Paired: true, Directional: true,
			Colour:    color.RGBA{0, 0x80, 0, 0xff},
			Violation: func(v float64) string { return fmt.Sprintf("moved %.3f the wrong way", v) }},
	} {
		if err := RegisterTestType(s); err != nil {
			panic(err) // the built-in table is wrong: a programming error
		}
	}
}

// RegisterTestType adds a test type. The name must be new, upper case
// (files may spell it in lower case) and the spec must say how a failing
// input is described.
func RegisterTestType(s TypeSpec) error {
	if s.Name == "" || strings.ToUpper(string(s.Name)) != string(s.Name) {
		return fmt.Errorf("test type %q: want an upper-case name", s.Name)
	}
	if s.Violation == nil {
		return fmt.Errorf("test type %s: no Violation text", s.Name)
	}
	if s.Legend == "" {
		s.Legend = string(s.Name)
	}
	if s.Expect.Kind != "" && s.Expect.Agg == "" {
		return fmt.Errorf("test type %s: default expectation %s has no agg", s.Name, s.Expect.Kind)
	}
	typeMu.Lock()
	defer typeMu.Unlock()
	if typeSpecs[s.Name] != nil {
		return fmt.Errorf("test type %s registered twice", s.Name)
	}
	typeSpecs[s.Name] = &s
	typeOrder = append(typeOrder, s.Name)
	return nil
}

// TestTypes lists the registered test types in registration order (MFT,
// INV, DIR first).
func TestTypes() []TestType {
	typeMu.RLock()
	defer typeMu.RUnlock()
	return append([]TestType(nil), typeOrder...)
}

// Spec returns the registration of t; an unregistered type gets the spec
// of a labelled type with no default expectation, so that reading a store
// written with a type this binary does not know still draws and describes.
func (t TestType) Spec() *TypeSpec {
	typeMu.RLock()
	s := typeSpecs[t]
	typeMu.RUnlock()
	if s == nil {
		return &TypeSpec{Name: t, Legend: string(t), Colour: color.RGBA{0x80, 0x80, 0x80, 0xff},
			Violation: func(v float64) string { return fmt.Sprintf("violation %.3f", v) }}
	}
	return s
}

// Registered says whether t is a registered test type.
func (t TestType) Registered() bool {
	typeMu.RLock()
	defer typeMu.RUnlock()
	return typeSpecs[t] != nil
}

// TypeList spells the registered types for messages: "MFT, INV or DIR".
func TypeList() string {
	ts := TestTypes()
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = string(t)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseTestType accepts a registered test type, in upper or lower case.
func ParseTestType(s string) (TestType, error) {
	if t := TestType(strings.ToUpper(s)); (s == string(t) || s == strings.ToLower(s)) && t.Registered() {
		return t, nil
	}
	return "", fmt.Errorf("unknown test type %q (want %s)", s, TypeList())
}

// DefaultExpectation is the expectation of a functionality of type t whose
// suite names none; the zero Expectation for a type that has no default.
func DefaultExpectation(t TestType) Expectation {
	return t.Spec().Expect
}

// pairedList spells the paired types for messages: "INV and DIR".
func pairedList() string {
	var names []string
	for _, t := range TestTypes() {
		if t.Spec().Paired {
			names = append(names, string(t))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// RegisterExpectKind adds an expectation kind that suite files may name,
// for a type whose verdict rule is new; package metrics is given the rule
// itself (metrics.RegisterRule).
func RegisterExpectKind(kind string) error {
	typeMu.Lock()
	defer typeMu.Unlock()
	if kind == "" || knownExpectKinds[kind] {
		return fmt.Errorf("expectation kind %q: empty or registered twice", kind)
	}
	knownExpectKinds[kind] = true
	addedExpectKinds[kind] = true
	return nil
}

// addedExpectKinds are the kinds RegisterExpectKind added.
var addedExpectKinds = map[string]bool{}

// AddedExpectKind says whether kind was added by RegisterExpectKind (its
// rule is registered, not shipped).
func AddedExpectKind(kind string) bool {
	typeMu.RLock()
	defer typeMu.RUnlock()
	return addedExpectKinds[kind]
}

// KnownExpectKind says whether kind is a shipped or registered expectation
// kind.
func KnownExpectKind(kind string) bool {
	typeMu.RLock()
	defer typeMu.RUnlock()
	return knownExpectKinds[kind]
}
