// Package perturb makes INV and DIR test cases by perturbing texts, as
// CheckList's Perturb does (REFERENCE 2.6): typos, contractions and
// expansions, punctuation, changing person names, locations and numbers, and
// adding a negation where one applies. Every perturbation draws from a seeded
// stream, so one seed gives byte-identical suites.
//
// CheckList finds names, places and verbs with spaCy; this package has no
// parser, so it recognises them from its lexicons and a few surface rules
// (documented on each function and in docs/suite-authoring.md). The
// contraction maps and the typo, punctuation and number rules are CheckList's.
package perturb

import (
	"fmt"
	"strings"

	"github.com/beluga-nlp/beluga/internal/nprand"
)

// Rand is the stream perturbations draw from: numpy's legacy MT19937 with
// numpy's bounded-integer rule, the generator CheckList's perturbations use.
type Rand struct{ src *nprand.RandomState }

// NewRand seeds a stream.
func NewRand(seed uint32) *Rand { return &Rand{src: nprand.NewRandomState(seed)} }

// Intn returns a uniform integer in [0, n); n must be positive.
func (r *Rand) Intn(n int) int { return int(nprand.Interval(r.src, uint64(n-1))) }

// Choice draws k indices in [0, n) with replacement (np.random.choice(n, k)).
func (r *Rand) Choice(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = r.Intn(n)
	}
	return out
}

// Sample draws k distinct indices in [0, n) (np.random.choice(n, k,
// replace=False): the first k of a permutation).
func (r *Rand) Sample(n, k int) []int {
	return nprand.Permutation(r.src, n)[:k]
}

// Shuffle permutes xs in place.
func (r *Rand) Shuffle(xs []int) { nprand.Shuffle(r.src, xs) }

// Func perturbs one text. It returns the perturbed texts, or none when the
// perturbation does not apply to it.
type Func func(text string, r *Rand) []string

// Perturbation is a named perturbation.
type Perturbation struct {
	Name string
	// Doc says what it does, for help texts.
	Doc string
	Fn  Func
}

// Options parameterise the perturbations that take a count.
type Options struct {
	// Typos is the number of adjacent-character swaps of "typos" (default 1).
	Typos int
	// N is the number of replacements drawn by the name, location and number
	// perturbations (default 10, CheckList's n).
	N int
}

func (o Options) withDefaults() Options {
	if o.Typos <= 0 {
		o.Typos = 1
	}
	if o.N <= 0 {
		o.N = 10
	}
	return o
}

// Lookup returns the perturbation called name.
func Lookup(name string, opt Options) (Perturbation, error) {
	opt = opt.withDefaults()
	for _, p := range All(opt) {
		if p.Name == name {
			return p, nil
		}
	}
	return Perturbation{}, fmt.Errorf("unknown perturbation %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// Names lists the perturbations.
func Names() []string {
	var out []string
	for _, p := range All(Options{}) {
		out = append(out, p.Name)
	}
	return out
}

// All lists every perturbation with opt applied.
func All(opt Options) []Perturbation {
	opt = opt.withDefaults()
	return []Perturbation{
		{"typos", "swap adjacent characters at random positions (CheckList add_typos)", func(s string, r *Rand) []string {
			if t, ok := AddTypos(s, opt.Typos, r); ok {
				return []string{t}
			}
			return nil
		}},
		{"contractions", "expand contractions and contract expandable phrases (CheckList contractions)", Contractions},
		{"punctuation", "strip final punctuation, and/or end with a period (CheckList punctuation)", Punctuation},
		{"change_names", "replace a known first name (and last name) with other names", func(s string, r *Rand) []string { return ChangeNames(s, opt.N, r) }},
		{"change_location", "replace a known city or country with others", func(s string, r *Rand) []string { return ChangeLocation(s, opt.N, r) }},
		{"change_number", "replace integers with others within 20 % (not 2 or 4)", func(s string, r *Rand) []string { return ChangeNumber(s, opt.N, r) }},
		{"add_negation", "negate the first copula or auxiliary verb (is → is not, can → can't)", func(s string, _ *Rand) []string {
			if t, ok := AddNegation(s); ok {
				return []string{t}
			}
			return nil
		}},
	}
}

// Stats counts what a perturbation did to a list of examples.
type Stats struct {
	Examples int // examples looked at
	Applied  int // examples the perturbation applied to (cases made)
}

// Apply perturbs texts with fn as CheckList's Perturb.perturb does: in
// order, or, when nsamples > 0, in a shuffled order until nsamples examples
// have been perturbed. Each case is the original followed by its
// perturbations; examples the perturbation does not apply to are skipped and
// counted.
func Apply(texts []string, fn Func, nsamples int, seed uint32) ([][]string, Stats) {
	r := NewRand(seed)
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	if nsamples > 0 {
		r.Shuffle(order)
	}
	var out [][]string
	var st Stats
	for _, i := range order {
		if nsamples > 0 && st.Applied == nsamples {
			break
		}
		st.Examples++
		if strings.TrimSpace(texts[i]) == "" {
			continue
		}
		var ps []string
		for _, p := range fn(texts[i], r) {
			if p != "" {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			continue
		}
		out = append(out, append([]string{texts[i]}, ps...))
		st.Applied++
	}
	return out, st
}

// subsample is CheckList's process_ret: more than n results are cut down to
// n drawn without replacement.
func subsample(ret []string, n int, r *Rand) []string {
	if len(ret) <= n {
		return ret
	}
	idx := r.Sample(len(ret), n)
	out := make([]string, n)
	for i, j := range idx {
		out[i] = ret[j]
	}
	return out
}
