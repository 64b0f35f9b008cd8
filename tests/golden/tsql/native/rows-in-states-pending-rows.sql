-- native: rows_in_states pending rows
/* queuetop */ SELECT TOP (?) [WorkQueueID], [CreatedDate], [JobInfo] FROM [queuetop].[WorkQueue] WITH (READPAST) WHERE (([RetrievedDate] IS NULL AND [AvailableDate] <= SYSUTCDATETIME()) AND [Attempts] >= 0) AND [JobType] = CAST(? AS nvarchar(128)) ORDER BY [CreatedDate], [WorkQueueID];
