-- native: max_id
/* queuetop */ SELECT MAX(qt_id) FROM (SELECT MAX([WorkQueueID]) AS qt_id FROM [queuetop].[WorkQueue] WITH (NOLOCK) UNION ALL SELECT MAX([WorkQueueID]) AS qt_id FROM [queuetop].[WorkCompleted] WITH (NOLOCK)) AS qt_highest;
