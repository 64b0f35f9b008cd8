-- requests: recent_completions
/* queuetop */ SELECT TOP (?) [id], [CompletedDate], [InsertedDate], [RemovedDate], [RemovedDate], [CompletedDate], NULL FROM [dbo].[RequestsCompleted] WITH (READPAST) WHERE [CompletedDate] > CAST(? AS datetime) ORDER BY [CompletedDate] DESC;
