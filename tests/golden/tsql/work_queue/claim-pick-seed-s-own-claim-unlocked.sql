-- work_queue: claim_pick seed's own claim (unlocked)
/* queuetop */ SELECT TOP (1) [work_queue_id], NULL AS qt_type, NULL AS qt_token, NULL AS qt_attempts FROM [dbo].[work_queue] WHERE ([processed_flag] = 0);
