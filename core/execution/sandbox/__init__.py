"""Processes that run candidate code: zygote, runner, isolation helpers. These modules run
under the task interpreter and import nothing from convtui."""
