-- native: arrivals_by_id
/* queuetop */ SELECT TOP (?) [WorkQueueID], [JobType], [CreatedDate] FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] > CAST(? AS bigint) ORDER BY [WorkQueueID];
