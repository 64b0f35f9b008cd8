"""What changes a queue, only as its layout declares: the leased queue's operations, any shape's actions and dequeue,
the dashboard's writes, workers and their release."""
