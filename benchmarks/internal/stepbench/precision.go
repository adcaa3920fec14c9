package stepbench

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// SetPrecision makes the step's model compute its products in p ("fp32",
// "bf16"; "" is fp32), as a run with model.precision does.
func (s *Step) SetPrecision(p string) error {
	prec, err := models.ParsePrecision(p)
	if err != nil {
		return fmt.Errorf("-precision: %w", err)
	}
	m, ok := s.m.(interface{ SetPrecision(models.Precision) })
	if !ok {
		return fmt.Errorf("-precision %s: the %T has no precision setting", p, s.m)
	}
	m.SetPrecision(prec)
	return nil
}

// Backend returns the backend the step's model computes on.
func (s *Step) Backend() backend.Backend { return s.m.Backend() }

// SetBackend makes the step's model compute on b (in its precision).
func (s *Step) SetBackend(b backend.Backend) error {
	m, ok := s.m.(interface{ SetBackend(backend.Backend) })
	if !ok {
		return fmt.Errorf("the %T has no backend setting", s.m)
	}
	m.SetBackend(b)
	return nil
}
