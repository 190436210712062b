"""Fidelity against the bf16 reference: teacher-forced top-1 agreement and KL over many positions."""
