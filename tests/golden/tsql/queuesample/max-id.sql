-- queuesample: max_id
/* queuetop */ SELECT MAX([WorkQueueID]) FROM [QueueSample].[WorkQueue] WITH (NOLOCK);
