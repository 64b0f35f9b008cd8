-- native: arrivals_after
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] > ? UNION ALL SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [WorkQueueID] > ?;
