-- native: arrivals_by_time
/* queuetop */ SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [CreatedDate] > CAST(? AS datetime2(3)) UNION ALL SELECT [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkCompleted] WITH (NOLOCK) WHERE [CreatedDate] > CAST(? AS datetime2(3));
