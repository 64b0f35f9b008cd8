-- work_queue: arrival_counts
/* queuetop */ SELECT NULL, NULL, COUNT(*), SUM(CASE WHEN [work_queue_id] > CAST(? AS int) THEN 1 ELSE 0 END), MAX([work_queue_id]) FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [work_queue_id] > CAST(? AS int);
