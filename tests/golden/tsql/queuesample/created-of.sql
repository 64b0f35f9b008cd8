-- queuesample: created_of
/* queuetop */ SELECT [WorkQueueID], [CreatedDate] FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] IN (?, ?);
