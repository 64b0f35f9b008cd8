-- work_queue: insert
/* queuetop */ INSERT INTO [dbo].[work_queue] ([name], [processed_flag]) OUTPUT inserted.[work_queue_id] VALUES (CAST(? AS varchar(255)), 0);
