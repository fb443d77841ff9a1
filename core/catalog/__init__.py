"""The task catalog: tasks, their datasets and loaders, CodeIF-Bench's repository rows, search."""
