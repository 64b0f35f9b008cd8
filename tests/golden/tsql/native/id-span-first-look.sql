-- native: id_span first look
/* queuetop */ SELECT (SELECT MIN([WorkQueueID]) FROM [queuetop].[WorkQueue] WITH (NOLOCK)), (SELECT MAX([WorkQueueID]) FROM [queuetop].[WorkQueue] WITH (NOLOCK));
