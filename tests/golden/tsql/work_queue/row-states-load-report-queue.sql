-- work_queue: row_states load report: queue
/* queuetop */ SELECT [work_queue_id], CASE WHEN [processed_flag] = 0 THEN 'pending' ELSE NULL END FROM [dbo].[work_queue] WHERE [work_queue_id] >= CAST(? AS int);
