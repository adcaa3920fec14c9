// Package losses builds BeLUGA's behaviour-specific losses as gorgonia graph
// nodes: MFT cross-entropy with soft labels, INV prediction cross-entropy, and
// DIR -log(1-eps).
package losses
