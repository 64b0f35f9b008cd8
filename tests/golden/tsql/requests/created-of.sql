-- requests: created_of
/* queuetop */ SELECT [id], [InsertedDate] FROM [dbo].[RequestsQueue] WITH (NOLOCK) WHERE [id] IN (?, ?);
