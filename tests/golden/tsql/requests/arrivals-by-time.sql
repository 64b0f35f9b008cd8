-- requests: arrivals_by_time
/* queuetop */ SELECT [id], NULL, [InsertedDate] FROM [dbo].[RequestsQueue] WITH (NOLOCK) WHERE [InsertedDate] > CAST(? AS datetime) UNION ALL SELECT [id], NULL, [InsertedDate] FROM [dbo].[RequestsCompleted] WITH (NOLOCK) WHERE [InsertedDate] > CAST(? AS datetime);
