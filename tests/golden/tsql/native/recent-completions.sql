-- native: recent_completions
/* queuetop */ SELECT TOP (?) [WorkQueueID], [Outcome], [CreatedDate], [RetrievedDate], [CompletedDate] FROM [queuetop].[WorkCompleted] WITH (READPAST) WHERE [CompletedDate] > ? AND [JobType] = ? ORDER BY [CompletedDate] DESC, [WorkQueueID] DESC;
