-- native: give_back
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL, [Attempts] = [Attempts] - 1 WHERE [WorkQueueID] = CAST(? AS bigint) AND [ProcessingMark] = CAST(? AS uniqueidentifier);
