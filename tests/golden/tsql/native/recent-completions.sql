-- native: recent_completions
/* queuetop */ SELECT TOP (?) [WorkQueueID], [CompletedDate], [CreatedDate], [RetrievedDate], [RetrievedDate], [CompletedDate], [Outcome] FROM [queuetop].[WorkCompleted] WITH (READPAST) WHERE [CompletedDate] > CAST(? AS datetime2(3)) AND [JobType] = CAST(? AS nvarchar(128)) ORDER BY [CompletedDate] DESC;
