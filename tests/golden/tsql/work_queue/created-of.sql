-- work_queue: created_of
/* queuetop */ SELECT [work_queue_id], CAST(NULL AS datetime2(3)) FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [work_queue_id] IN (?, ?);
