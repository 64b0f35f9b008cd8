-- requests: completions_after
/* queuetop */ SELECT [id], NULL, [CompletedDate], [InsertedDate], [RemovedDate], [RemovedDate], [CompletedDate] FROM [dbo].[RequestsCompleted] WITH (NOLOCK) WHERE [CompletedDate] > CAST(? AS datetime);
