"""ConvCodeWorld parity (``--protocol convcodeworld``). Among its modules:

- :mod:`convtui.core.ccw.template`: the DSPy 2.4.12 prompts of each feedback-turn mode, the
  parsing of completions and CCW's post-processing of code and simulated user feedback;
- :mod:`convtui.core.ccw.turn`: ``ProgramOfThought.forward`` for one feedback turn, as a
  generator of model calls with no I/O.

The turn loop plays them through :mod:`convtui.core.play.ccw_policies` (journaled calls,
events, the execution); nothing here imports the loop.
"""
