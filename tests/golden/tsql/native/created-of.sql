-- native: created_of
/* queuetop */ SELECT [WorkQueueID], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] IN (?, ?);
