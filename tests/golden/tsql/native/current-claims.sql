-- native: current_claims
/* queuetop */ SELECT TOP (?) [WorkQueueID], [RetrievedBy], [RetrievedDate], [TimeoutDate], [Attempts] FROM [queuetop].[WorkQueue] WITH (READPAST) WHERE [RetrievedDate] IS NOT NULL AND [JobType] = ? ORDER BY [TimeoutDate], [WorkQueueID];
