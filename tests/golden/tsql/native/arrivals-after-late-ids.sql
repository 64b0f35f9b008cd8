-- native: arrivals_after late ids
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] > ? OR [WorkQueueID] IN (?, ?) UNION ALL SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [WorkQueueID] > ? OR [WorkQueueID] IN (?, ?);
