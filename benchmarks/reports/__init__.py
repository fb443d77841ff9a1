"""What ``convtui report`` computes from a store: ConvCodeWorld's tables, the static and
CodeIF-Bench tables, rank correlations and figures."""
