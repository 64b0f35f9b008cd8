"""What a queue looked like before: the history file, its reports, and the chart series read from it."""
