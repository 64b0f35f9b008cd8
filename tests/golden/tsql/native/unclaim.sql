-- native: unclaim
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL,
            [TimeoutDate] = NULL, [Attempts] = [Attempts] - 1 WHERE [WorkQueueID] = ? AND [ProcessingMark] = ?;
