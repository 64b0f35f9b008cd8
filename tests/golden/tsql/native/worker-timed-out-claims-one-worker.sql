-- native: worker_timed_out_claims one worker
/* queuetop */ SELECT TOP (?) [WorkQueueID], [ProcessingMark], [Attempts] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME() AND [RetrievedBy] = ? ORDER BY [WorkQueueID];
