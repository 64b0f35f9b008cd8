-- native: arrivals_since
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [CreatedDate] > ? UNION ALL SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CompletedDate] > ? AND [CreatedDate] > ?;
