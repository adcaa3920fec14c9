package train

// The defaults that flags, experiment specs and the sweep runner all read
// when a run does not say otherwise: BeLUGA's.
var (
	// DefaultIIDHyper is BeLUGA's IID fine-tuning (iid_finetuning.py: 3
	// epochs, batch 16, lr 2e-5).
	DefaultIIDHyper = Hyper{Epochs: 3, BatchSize: 16, LR: 2e-5}
	// DefaultHyper is BeLUGA's hard-coded fallback for vanilla sentiment in
	// set_hyperparams (1 epoch, batch 8, lr 2e-5), used when nothing is
	// searched or given.
	DefaultHyper = Hyper{Epochs: 1, BatchSize: 8, LR: 2e-5}
	// DefaultProbeHyper is BeLUGA's hard-coded LP row, with LP-FT's 1.5
	// epochs.
	DefaultProbeHyper = Hyper{Epochs: LPFTEpochs, BatchSize: 8, LR: 1e-3}
)

// DefaultMaxLength is BeLUGA's sentiment padding length.
const DefaultMaxLength = 128
