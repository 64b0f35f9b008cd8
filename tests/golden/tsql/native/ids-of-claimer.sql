-- native: ids_of_claimer
/* queuetop */ SELECT TOP (?) [WorkQueueID], [ProcessingMark] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE ([RetrievedDate] IS NULL AND [AvailableDate] <= SYSUTCDATETIME()) AND [RetrievedBy] = CAST(? AS nvarchar(128)) ORDER BY [WorkQueueID];
