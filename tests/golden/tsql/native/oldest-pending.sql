-- native: oldest_pending
/* queuetop */ SELECT TOP (?) [WorkQueueID], [CreatedDate], [AvailableDate], [Priority], [Attempts], SUBSTRING([JobInfo], 1, 200) FROM [queuetop].[WorkQueue] WITH (READPAST) WHERE [RetrievedDate] IS NULL AND [JobType] = ? AND [Attempts] >= 0 ORDER BY [CreatedDate], [WorkQueueID];
