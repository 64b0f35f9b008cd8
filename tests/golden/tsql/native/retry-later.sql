-- native: retry_later
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL,
            [TimeoutDate] = NULL, [AvailableDate] = DATEADD(millisecond, ?, DATEADD(second, ?, SYSUTCDATETIME()))
            WHERE [WorkQueueID] = ? AND [ProcessingMark] = ? AND [Attempts] < ?;
