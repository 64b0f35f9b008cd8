-- native: job_by_id completed
/* queuetop */ SELECT [WorkQueueID], [JobType], [JobInfo], [CreatedDate], [RetrievedDate], [CompletedDate], [RetrievedBy], [Attempts], [Outcome], CASE WHEN [Outcome] = 'dead' THEN 'dead' ELSE NULL END FROM [queuetop].[WorkCompleted] WITH (READPAST) WHERE [WorkQueueID] = CAST(? AS bigint);
