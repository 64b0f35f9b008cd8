-- native: worker_timed_out_claims no worker recorded
/* queuetop */ SELECT TOP (?) [WorkQueueID], [ProcessingMark], [Attempts] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL AND [TimeoutDate] < SYSUTCDATETIME() AND [RetrievedBy] IS NULL ORDER BY [WorkQueueID];
