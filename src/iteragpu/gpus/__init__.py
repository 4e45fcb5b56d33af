"""The GPUs: the catalogue of cards and rental packages, lab results read as evidence, and the
short list that compares the cards for a need. Built on `iteragpu.core` only."""
