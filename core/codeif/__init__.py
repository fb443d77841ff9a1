"""CodeIF-Bench: does a model keep following every instruction as they accumulate.

- instructions.py: a task's instructions in the benchmark's order (the initial one first);
- programs.py: what runs to check them (one execution per round, every instruction's tests);
- metrics.py: IA, CA, IFR and IFE on round matrices, as the paper defines them.
"""
