-- native: max_job_id
/* queuetop */ SELECT (SELECT MAX([WorkQueueID]) FROM [queuetop].[WorkQueue] WITH (NOLOCK)), (SELECT MAX([WorkQueueID]) FROM [queuetop].[WorkCompleted] WITH (NOLOCK));
