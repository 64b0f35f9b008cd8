-- native: release_claim
/* queuetop */ UPDATE [queuetop].[WorkQueue] SET [RetrievedDate] = NULL, [RetrievedBy] = NULL, [ProcessingMark] = NULL, [TimeoutDate] = NULL WHERE [WorkQueueID] = ? AND [ProcessingMark] = ? AND [TimeoutDate] < SYSUTCDATETIME() AND [Attempts] < ?;
